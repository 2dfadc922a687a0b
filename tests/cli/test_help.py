"""Every command's help shows what each option defaults to, and --scenario lists the
scenarios that exist (a new user reads --help before the docs)."""
import argparse
from pathlib import Path

import pytest

from cli.commands.run import group_size_help
from cli.main import build_parser
from conformance.scenarios.registry import SCENARIOS


def _commands(parser, path=("rmqha",)):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, path + (name,))
    yield " ".join(path), parser


COMMANDS = dict(_commands(build_parser()))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_option_says_its_default(command):
    missing = []
    for action in COMMANDS[command]._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction,
                               argparse._StoreTrueAction, argparse._StoreFalseAction)):
            continue  # a flag is off unless given
        if not action.option_strings or action.required:
            continue  # positional or required: nothing to default
        if "default" not in (action.help or "").lower():
            missing.append(action.option_strings[0])
    assert not missing, f"{command}: options whose help does not say the default: {missing}"


@pytest.mark.parametrize("command", ["rmqha run", "rmqha check"])
def test_scenario_help_lists_every_scenario_and_profile(command):
    text = COMMANDS[command].format_help().replace("\n", " ")
    text = " ".join(text.split())
    for name, scenario in SCENARIOS.items():
        assert name in text
        for profile in scenario.profiles:
            assert profile in text


def test_mutants_scenario_help_lists_scenarios_with_mutants():
    text = " ".join(COMMANDS["rmqha mutants"].format_help().split())
    for name, scenario in SCENARIOS.items():
        if scenario.mutants:
            assert name in text


@pytest.mark.parametrize("command", ["rmqha run", "rmqha check", "rmqha mutants"])
def test_group_size_help_names_every_scenarios_default_sizes(command):
    """The defaults shown are the registry's (a hand-written "3 and 5" outlived the
    change to 3, 4 and 5 once): each scenario's sizes, in the order they rotate."""
    text = " ".join(COMMANDS[command].format_help().split())
    for name, scenario in SCENARIOS.items():
        assert f"{name} {', '.join(map(str, scenario.group_sizes))}" in text


def test_the_reports_flag_table_gives_the_registrys_group_sizes():
    table = (Path(__file__).resolve().parents[2] / "docs" / "reports.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| `--group-size N`"))
    assert f"the scenario's: {group_size_help()}" in row
