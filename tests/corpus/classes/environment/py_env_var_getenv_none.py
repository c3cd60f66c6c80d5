import os
# The script insists on its key and says so.
key = os.getenv("WEATHER_API_KEY")
if not key:
    raise SystemExit("error: the environment variable WEATHER_API_KEY is not set")
print(key)
