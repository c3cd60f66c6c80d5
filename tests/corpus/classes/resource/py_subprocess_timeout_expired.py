import subprocess
print("rebuilding the search index")
subprocess.run(["sleep", "5"], timeout=0.5, check=True)
