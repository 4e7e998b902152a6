"""Placeholder: being written."""


def register(subparsers) -> None:
    pass
