# The clients of load/health-flood.ts: N threads, each POSTing the same body to /api/thumbnail in a loop
# with Python's http.client, which sends the whole body before it reads a byte of the reply (as many real
# clients do). Prints one JSON line of reply counts and resets when the time is up. Loopback only.
import http.client, json, sys, threading, time
from urllib.parse import urlsplit

base, key, path, clients, seconds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
url = urlsplit(base)
assert url.hostname in ('127.0.0.1', 'localhost'), 'loopback only'
body = open(path, 'rb').read()
until = time.monotonic() + seconds
counts, lock = {}, threading.Lock()

def count(what):
    with lock:
        counts[what] = counts.get(what, 0) + 1

def client():
    conn = None
    while time.monotonic() < until:
        try:
            if conn is None:
                conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
            conn.request('POST', '/api/thumbnail?at=1', body=body,
                          headers={'authorization': 'Bearer ' + key, 'content-type': 'video/mp4'})
            res = conn.getresponse()
            res.read()
            count(str(res.status))
            if res.getheader('connection', '').lower() == 'close':
                conn.close(); conn = None
        except (ConnectionResetError, BrokenPipeError):
            count('reset'); conn = None
        except Exception as err:
            count(type(err).__name__); conn = None

threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
for t in threads: t.start()
for t in threads: t.join(seconds + 60)
print(json.dumps(counts), flush=True)
