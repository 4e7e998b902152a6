"""The ``kafka-lite`` command.

No Kafka twin: modelled on Kafka's ``bin/*.sh`` scripts (one sub-command per script, flag for flag
where one exists), with rich output. Nothing in kafka_lite imports this package.
"""


class CliError(Exception):
    """A failure the user can act on; printed as one line, without a traceback.

    ``exit_code`` is 2 for bad usage (a wrong argument, a missing file) and 1 when the work itself
    failed (a corrupt file, a lab not at full marks).
    """

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
