"""Interoperability with other frameworks. ``minitorch_ln.interop.torch`` (PyTorch optional) converts
state dicts both ways and compares a model with its PyTorch twin layer by layer.

The submodule is not imported here, so ``import minitorch_ln`` never imports PyTorch.
"""
