set -e
echo "checking the mirror"
test -n ""
echo "mirror is fine"
