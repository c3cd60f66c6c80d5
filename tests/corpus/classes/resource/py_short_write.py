import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
chunk = b"x" * 10240
fd = os.open("export.bin", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
written = os.write(fd, chunk)
if written < len(chunk):
    sys.exit(f"Wrote only {written} of {len(chunk)} bytes to export.bin")
