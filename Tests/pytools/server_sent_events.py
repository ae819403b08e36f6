"""Server-sent events as the Python suites read them: `parse_events` for a stream read whole, and
`EventReader` for one read as it arrives. An event is {"event", "data", "id"?}: comments are skipped,
`event` defaults to "message", several `data` lines are joined with a newline."""


def parse_events(text):
    """The events of a whole event stream's text."""
    reader = EventReader()
    events = list(reader.feed(text))
    return events + list(reader.feed("\n\n"))


class EventReader:
    """Turns the text of an event stream, fed in pieces of any size, into its events."""

    def __init__(self):
        self.pending = ""

    def feed(self, text):
        """Yields each event that `text` completes; a partial one waits for the next piece."""
        self.pending += text.replace("\r\n", "\n")
        *blocks, self.pending = self.pending.split("\n\n")
        for block in blocks:
            event = self._event(block)
            if event is not None:
                yield event

    @staticmethod
    def _event(block):
        fields = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value
        if "data" not in fields:
            return None
        fields.setdefault("event", "message")
        return fields
