import sys
for done in range(0, 101, 10):
    sys.stderr.write(f"\rdownloading [{'#' * (done // 10):<10}] {done}% (retrying after timeout: 0)")
    sys.stderr.flush()
sys.stderr.write("\n")
counts = {"north": 10, "south": 0}
print(counts["north"] / counts["south"])
