from datetime import datetime
# Dates come as 2024-03-01 now, not 01/03/2024.
print(datetime.strptime("2024-03-01", "%d/%m/%Y"))
