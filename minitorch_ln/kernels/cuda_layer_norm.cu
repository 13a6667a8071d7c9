#define LN_COMB 16384   // bytes of shared memory per gradient sum for adding a block's row groups

// y = (x - mean) * rstd * weight + bias, one row per row group; mean and rstd saved per row.
// T: the type of x and y; W: the type of weight and bias (T, or float with float16 x).
template <typename T, typename W, int VEC, int ITEMS, int WPR>
__global__ void ln_fwd(const T* __restrict__ x, const W* __restrict__ weight, const W* __restrict__ bias,
                       T* __restrict__ y, typename Acc<T>::type* __restrict__ mean_out,
                       typename Acc<T>::type* __restrict__ rstd_out,
                       long long N, int D, double eps, int has_weight, int has_bias) {
    typedef typename Acc<T>::type A;
    typedef Pack<T, VEC> P;
    typedef Pack<W, VEC> PW;
    __shared__ A smem[32];
    const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    const bool valid = row < N;              // no early return: every thread must reach group_sum
    const int nvec = D / VEC;
    const T* xr = x + (valid ? row : 0) * (long long)D;
    const P* xrow = reinterpret_cast<const P*>(xr);
    // Shift the row by its first element: a constant row then has deviations of exactly 0, and for
    // a large mean with a small spread x - shift is exact (the NumPy oracle does the same).
    const A shift = valid ? to_acc(xr[0]) : (A)0;

    A v[ITEMS][VEC];                         // x - shift for this thread's part of the row
    A s = 0;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int c = k * (32 * WPR) + threadIdx.x;   // pack index in the row: coalesced per warp
        if (valid && c < nvec) {
            const P p = xrow[c];
#pragma unroll
            for (int j = 0; j < VEC; ++j) { v[k][j] = to_acc(p.v[j]) - shift; s += v[k][j]; }
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) v[k][j] = 0;
        }
    }
    const A mean_s = group_sum<WPR>(s, smem) / (A)D;  // mean(x - shift)

    A q = 0;                                 // second pass over the registers: exact variance
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int c = k * (32 * WPR) + threadIdx.x;
        if (valid && c < nvec) {
#pragma unroll
            for (int j = 0; j < VEC; ++j) { v[k][j] -= mean_s; q += v[k][j] * v[k][j]; }
        }
    }
    const A var = group_sum<WPR>(q, smem) / (A)D;   // biased: / D
    const A rstd = acc_rsqrt(var + (A)eps);
    if (!valid) return;                      // no synchronisation below this line
    if (threadIdx.x == 0) { mean_out[row] = shift + mean_s; rstd_out[row] = rstd; }

    P* yrow = reinterpret_cast<P*>(y + row * (long long)D);
    const PW* wp = reinterpret_cast<const PW*>(weight);
    const PW* bp = reinterpret_cast<const PW*>(bias);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int c = k * (32 * WPR) + threadIdx.x;
        if (c < nvec) {
            P out;
            PW w, b;
            if (has_weight) w = wp[c];
            if (has_bias) b = bp[c];
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
                A o = v[k][j] * rstd;                             // xhat
                if (has_weight) o *= (A)to_acc(w.v[j]);
                if (has_bias) o += (A)to_acc(b.v[j]);
                out.v[j] = cast_to<T>(o);
            }
            yrow[c] = out;
        }
    }
}

// dx for every row, plus the sums of dy * xhat (dweight) and dy (dbias) over the rows this block
// visits (row groups blockIdx.x, blockIdx.x + gridDim.x, ...), written to row blockIdx.x of
// part_dw / part_db, of shape (gridDim.x, D).
template <typename T, typename W, int VEC, int ITEMS, int WPR>
__global__ void ln_bwd(const T* __restrict__ dy, const T* __restrict__ x, const W* __restrict__ weight,
                       const typename Acc<T>::type* __restrict__ mean,
                       const typename Acc<T>::type* __restrict__ rstd,
                       T* __restrict__ dx, typename Acc<T>::type* __restrict__ part_dw,
                       typename Acc<T>::type* __restrict__ part_db,
                       long long N, int D, int has_weight, int need_param_grads) {
    typedef typename Acc<T>::type A;
    typedef Pack<T, VEC> P;
    typedef Pack<W, VEC> PW;
    __shared__ A smem[96];
    const int nvec = D / VEC;
    const PW* wp = reinterpret_cast<const PW*>(weight);

    A dw_acc[ITEMS][VEC], db_acc[ITEMS][VEC];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
#pragma unroll
        for (int j = 0; j < VEC; ++j) { dw_acc[k][j] = 0; db_acc[k][j] = 0; }

    const long long groups = (N + blockDim.y - 1) / blockDim.y;
    for (long long grp = blockIdx.x; grp < groups; grp += gridDim.x) {   // same trip count in the block
        const long long row = grp * blockDim.y + threadIdx.y;
        const bool valid = row < N;
        const A mu = valid ? mean[row] : (A)0;
        const A rs = valid ? rstd[row] : (A)0;
        const P* xrow = reinterpret_cast<const P*>(x + (valid ? row : 0) * (long long)D);
        const P* dyrow = reinterpret_cast<const P*>(dy + (valid ? row : 0) * (long long)D);

        A xc[ITEMS][VEC], d[ITEMS][VEC];     // x - mean, and dy
        A sums[3] = {0, 0, 0};               // sum(xc), sum(g), sum(g * xc) with g = dy * weight
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int c = k * (32 * WPR) + threadIdx.x;
            if (valid && c < nvec) {
                const P xp = xrow[c], dp = dyrow[c];
                PW w;
                if (has_weight) w = wp[c];
#pragma unroll
                for (int j = 0; j < VEC; ++j) {
                    xc[k][j] = to_acc(xp.v[j]) - mu;
                    d[k][j] = to_acc(dp.v[j]);
                    const A g = has_weight ? d[k][j] * (A)to_acc(w.v[j]) : d[k][j];
                    sums[0] += xc[k][j];
                    sums[1] += g;
                    sums[2] += g * xc[k][j];
                }
            } else {
#pragma unroll
                for (int j = 0; j < VEC; ++j) { xc[k][j] = 0; d[k][j] = 0; }
            }
        }
        group_sums<WPR, 3>(sums, smem);
        // The saved mean was rounded to A: re-centre (xhat = (xc - mean(xc)) * rstd) so that
        // sum(xhat) = 0 as the derivation assumes; sum(g * xhat) follows without another pass.
        const A cx = sums[0] / (A)D;
        const A mean_g = sums[1] / (A)D;
        const A mean_gxhat = rs * (sums[2] - cx * sums[1]) / (A)D;
        if (valid) {
            P* dxrow = reinterpret_cast<P*>(dx + row * (long long)D);
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int c = k * (32 * WPR) + threadIdx.x;
                if (c < nvec) {
                    P out;
                    PW w;
                    if (has_weight) w = wp[c];
#pragma unroll
                    for (int j = 0; j < VEC; ++j) {
                        const A xhat = (xc[k][j] - cx) * rs;
                        const A g = has_weight ? d[k][j] * (A)to_acc(w.v[j]) : d[k][j];
                        // the three terms: g, minus its row mean, minus xhat times mean(g * xhat)
                        out.v[j] = cast_to<T>(rs * (g - mean_g - xhat * mean_gxhat));
                        dw_acc[k][j] += d[k][j] * xhat;
                        db_acc[k][j] += d[k][j];
                    }
                    dxrow[c] = out;
                }
            }
        }
    }
    if (!need_param_grads) return;
    // Add up the RPB row groups of the block (same columns, fixed order), one partial row per block.
    A* pdw = part_dw + (long long)blockIdx.x * D;
    A* pdb = part_db + (long long)blockIdx.x * D;
    if (blockDim.y == 1) {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int c = k * (32 * WPR) + threadIdx.x;
            if (c < nvec) {
#pragma unroll
                for (int j = 0; j < VEC; ++j) { pdw[c * VEC + j] = dw_acc[k][j]; pdb[c * VEC + j] = db_acc[k][j]; }
            }
        }
        return;
    }
    // RPB > 1 only when WPR <= 4, so RPB * D <= 8 * 32 * (elements per thread) <= LN_COMB / sizeof(A)
    __shared__ A comb[2 * LN_COMB / sizeof(A)];
    const int half = LN_COMB / sizeof(A);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int c = k * (32 * WPR) + threadIdx.x;
        if (c < nvec) {
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
                comb[threadIdx.y * D + c * VEC + j] = dw_acc[k][j];
                comb[half + threadIdx.y * D + c * VEC + j] = db_acc[k][j];
            }
        }
    }
    __syncthreads();
    if (threadIdx.y != 0) return;
    for (int col = threadIdx.x; col < D; col += blockDim.x) {
        A tw = 0, tb = 0;
        for (int t = 0; t < (int)blockDim.y; ++t) { tw += comb[t * D + col]; tb += comb[half + t * D + col]; }
        pdw[col] = tw;
        pdb[col] = tb;
    }
}

// dweight[j] = sum_r part_dw[r, j] (and dbias), blockDim = (32, 32): 32 columns per block, the rows
// split over threadIdx.y, then added in a fixed order through shared memory. A: partial sums' type.
template <typename A, typename W>
__global__ void ln_param_grads(const A* __restrict__ part_dw, const A* __restrict__ part_db,
                               W* __restrict__ dweight, W* __restrict__ dbias, int R, int D) {
    __shared__ A s_w[32][33];
    __shared__ A s_b[32][33];
    const int col = blockIdx.x * 32 + threadIdx.x;
    A aw = 0, ab = 0;
    if (col < D) {
        for (int r = threadIdx.y; r < R; r += 32) {
            aw += part_dw[(long long)r * D + col];
            ab += part_db[(long long)r * D + col];
        }
    }
    s_w[threadIdx.y][threadIdx.x] = aw;
    s_b[threadIdx.y][threadIdx.x] = ab;
    __syncthreads();
    if (threadIdx.y == 0 && col < D) {
        A tw = 0, tb = 0;
        for (int i = 0; i < 32; ++i) { tw += s_w[i][threadIdx.x]; tb += s_b[i][threadIdx.x]; }
        dweight[col] = cast_to<W>(tw);
        dbias[col] = cast_to<W>(tb);
    }
}
