import sys
print("step 1/3: download")
print("step 2/3: transform")
sys.exit(1)
