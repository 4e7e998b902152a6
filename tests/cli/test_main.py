"""The ``kafka-lite`` command's dispatch: a run names one sub-command and imports that module alone,
and the whole parser (``--help``, an unknown word) still lists them all."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kafka_lite.cli.main import SUBCOMMANDS, build_parser, main


def _choices(parser) -> list[str]:
    [subparsers] = [a for a in parser._actions if a.dest == "command"]
    return list(subparsers.choices)


def test_the_whole_parser_lists_every_subcommand_in_order():
    assert _choices(build_parser()) == list(SUBCOMMANDS)


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_each_subcommands_module_registers_that_subcommand_alone(name):
    assert _choices(build_parser(only=name)) == [name]


def test_a_broker_start_imports_neither_the_clients_nor_the_other_tools():
    probe = (
        "import sys\n"
        "from kafka_lite.cli.main import build_parser\n"
        "build_parser(only='broker').parse_args(['broker', 'start', 'server.properties'])\n"
        "print(sorted(m for m in ('kafka_lite.clients.admin', 'kafka_lite.cli.lab', 'kafka_lite.cli.jepsen',"
        " 'aiokafka', 'kafka_lite.cli.broker') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['kafka_lite.cli.broker']"


def test_an_unknown_subcommand_is_refused_naming_the_choices(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["nope"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nope'" in err and "'dump-log'" in err and "'broker'" in err
