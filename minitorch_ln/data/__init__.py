"""Datasets and tokenizers for the trainer: corpora, a character tokenizer, batch sampling."""

from .corpus import Corpus, CorpusError, clean_text, default_corpus, load_text
from .dataset import DatasetError, TokenDataset
from .tokenizer import CharTokenizer, TokenizerError

__all__ = ["CharTokenizer", "Corpus", "CorpusError", "DatasetError", "TokenDataset", "TokenizerError",
           "clean_text", "default_corpus", "load_text"]
