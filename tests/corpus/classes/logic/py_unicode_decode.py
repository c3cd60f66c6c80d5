# The supplier's file is Latin-1 now; the script reads it as UTF-8.
raw = "Café Müller;12".encode("latin-1")
print(raw.decode("utf-8").split(";"))
