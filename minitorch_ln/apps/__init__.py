"""What is built on the library: the corpus and tokenizer, the trainer, sampling, checkpoints, the
gradient-check targets and the ``minitorch-ln`` command."""
