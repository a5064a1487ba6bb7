"""A results file for the batch route (`posenc verify --results FILE`, SPEC.md section 7)."""
import json

from . import formats as F


class ResultsWriter:
    """Collects outputs of one format and writes the results file `posenc verify` reads. One file
    holds one format (SPEC.md section 7): write one per format."""

    def __init__(self, implementation, fmt, working_format=None):
        self.implementation = implementation
        self.format = F.check_format(fmt)
        if working_format not in (None, "f32", "f64"):
            raise F.PosencError(f"working_format {working_format!r}: expected f32, f64 or None")
        self.working_format = working_format
        self._results = {}

    def add(self, case, outputs=None, status="ok"):
        """The outputs of a case (numpy, torch on any device, a sequence; checked to be values of
        the format), or a status "invalid" or "unsupported"."""
        if status not in ("ok", "invalid", "unsupported"):
            raise F.PosencError(f"status {status!r}: expected ok, invalid or unsupported")
        if status != "unsupported" and self.format not in case.formats:
            raise F.PosencError(f"{case.file} tcId {case.tc_id}: not judged in {self.format} "
                                f"(judged in: {', '.join(case.formats) or 'none'})")
        entry = {"file": case.file, "tcId": case.tc_id}
        if status == "ok":
            entry["values"] = F.hex_values(self.format, outputs, f"{case.file} tcId {case.tc_id} in {self.format}")
        else:
            entry["status"] = status
        if (case.file, case.tc_id) in self._results:
            raise F.PosencError(f"{case.file} tcId {case.tc_id}: a second result (a results file holds one per case)")
        self._results[(case.file, case.tc_id)] = entry

    def document(self):
        doc = {"implementation": self.implementation, "format": self.format}
        if self.working_format:
            doc["workingFormat"] = self.working_format
        doc["results"] = list(self._results.values())
        return doc

    def write(self, path):
        with open(path, "w") as out:
            json.dump(self.document(), out)
