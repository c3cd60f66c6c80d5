# Loads the whole history into memory at once.
history = bytearray(10**14)
print(len(history))
