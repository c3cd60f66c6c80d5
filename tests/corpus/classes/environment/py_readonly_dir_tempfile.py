import os, tempfile
os.makedirs("spool", exist_ok=True)
os.chmod("spool", 0o555)
with tempfile.NamedTemporaryFile(dir="spool", suffix=".csv") as f:
    f.write(b"id,total\n")
