echo "$(date '+%Y-%m-%d %H:%M:%S') INFO export job started"
echo "$(date '+%Y-%m-%d %H:%M:%S') ERROR export job failed" >&2
exit 1
