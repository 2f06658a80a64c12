"""Errors about what the user typed or named on the command line (not the stack config itself)."""

from __future__ import annotations


class InputError(Exception):
    """A command-line argument or a file named on the command line is wrong.

    `argument` names the argument as the CLI spells it (`--gpus`, `STACK`, `-o/--output`); the CLI prints
    `gpuplane <command>: error: argument <argument>: <message>` and exits 2, like argparse does.
    """

    def __init__(self, message: str, argument: str | None = None) -> None:
        self.message = message
        self.argument = argument
        super().__init__(f"argument {argument}: {message}" if argument else message)


__all__ = ["InputError"]
