import subprocess, sys
print("resizing the images")
subprocess.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"], check=True)
