"""The rospy peers' "connected" line: printed once, before any message's line, when the peer's
subscriber has a publisher's connection or when its first message comes, whichever is first.

rospy tells no event when a connection is up, so a watcher thread looks at the subscriber's
connection count every 10 ms, for 20 s at most. (rospy counts a connection before its thread has
connected: the tests wait for the takt side to count the peer too; docs/ros1.md.)"""
import threading
import time


class ConnectedLine:
    def __init__(self, text: str) -> None:
        self.text = text
        self.lock = threading.Lock()  # a line of its own each: print writes text and newline apart
        self._said = False

    def say_locked(self) -> None:
        """Print the line once (self.lock held: the caller prints its own lines under it too)."""
        if not self._said:
            self._said = True
            print(self.text, flush=True)

    def watch(self, sub) -> None:
        """Print the line once sub has a publisher's connection (a daemon thread)."""

        def run() -> None:
            end = time.monotonic() + 20
            while sub.get_num_connections() == 0 and time.monotonic() < end:
                time.sleep(0.01)
            if sub.get_num_connections() > 0:
                with self.lock:
                    self.say_locked()

        threading.Thread(target=run, daemon=True).start()
