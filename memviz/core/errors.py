"""The one exception type the core raises for bad user input."""


class InputError(ValueError):
    """Bad user input: a missing file, malformed JSON, an impossible number.

    The message is one line that names the problem; the CLI prints it and exits
    with status 2, the GUI shows it at the field or import that caused it.
    """


def reject_unknown_fields(cls, data: dict, what: str) -> None:
    """Raise InputError naming the keys of `data` that are not fields of dataclass `cls`."""
    from dataclasses import fields

    unknown = set(data) - {f.name for f in fields(cls)}
    if unknown:
        raise InputError(f"unknown {what} fields: {', '.join(sorted(unknown))}")
