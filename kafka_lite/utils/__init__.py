"""Utilities at the bottom of the layering: the scheduler, and later the timing wheel."""
