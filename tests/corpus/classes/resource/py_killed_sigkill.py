import os, signal
print("processing 2 million rows")
os.kill(os.getpid(), signal.SIGKILL)  # what the kernel's OOM killer does
