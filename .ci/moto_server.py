"""moto's S3 server, with object writes made atomic as S3's are.

moto checks a PUT's If-Match / If-None-Match and then writes the object in a second step, on a
threaded server, so two conditional puts made against the same ETag can both pass the check
when the machine is loaded (the conformance suite's 8 x 500 concurrent appends on S3 lost two
lines in CI this way: both writers were told their compare-and-swap succeeded). S3 decides the
condition and the write as one step; so does this server, by holding one lock around every
write to an object (PUT, including copies, POST and DELETE on a key). Reads stay concurrent.

Run it as moto_server is run: python .ci/moto_server.py -H 127.0.0.1 -p PORT
"""

import sys
import threading

from moto.s3.responses import S3Response

_WRITES = threading.Lock()


def _atomic(name: str) -> None:
    unlocked = getattr(S3Response, name)

    def locked(self, *args, **kwargs):
        with _WRITES:
            return unlocked(self, *args, **kwargs)

    setattr(S3Response, name, locked)


for _name in ("_key_response_put", "_key_response_post", "_key_response_delete"):
    _atomic(_name)

if __name__ == "__main__":
    from moto.server import main

    main(sys.argv[1:])
