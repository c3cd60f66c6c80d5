echo "upload step failed" >&2
exit 1
