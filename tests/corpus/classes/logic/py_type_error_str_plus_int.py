# The count arrives as text now and is added to a number.
count = "42"
print("next batch starts at", count + 1)
