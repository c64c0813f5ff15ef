# Used by bench/low-load-tail.ts: the disk's own fsync latency, beside PostgreSQL's WAL waits.
# Writes 8 KB and fdatasyncs it every 10 ms on the database's disk; prints "epoch_ms latency_ms" per sync.
import os, sys, time
path = sys.argv[1]; seconds = float(sys.argv[2])
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
buf = os.urandom(8192); end = time.time() + seconds; i = 0
while time.time() < end:
    t0 = time.time(); os.pwrite(fd, buf, (i % 256) * 8192); os.fdatasync(fd); dt = (time.time() - t0) * 1000
    print(f"{int(t0 * 1000)} {dt:.2f}", flush=False); i += 1
    time.sleep(0.01)
os.close(fd); os.unlink(path)
