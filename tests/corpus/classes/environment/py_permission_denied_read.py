# Reads a file only root may read.
with open("/etc/shadow") as f:
    print(len(f.readlines()))
