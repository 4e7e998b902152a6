"""The consumer's internals (book chapter 4)."""
