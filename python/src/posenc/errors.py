"""The package's one error type: bad arguments, refused outputs, a CLI that answered an error."""


class PosencError(Exception):
    pass
