import subprocess, sys
subprocess.run([sys.executable, "-c", "x = bytearray(10**14)"], check=True, stderr=None)
