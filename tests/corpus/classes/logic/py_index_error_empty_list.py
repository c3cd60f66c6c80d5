# The first line of today's export is taken as the header, but the list is split wrong.
lines = "order,amount\n1,12.5".split(";")
header, first = lines[0], lines[1]
print(header, first)
