# Entrypoint of the fake engine image: remember the served name, answer HTTP on 8000.
/bin/busybox mkdir -p /tmp
name=""
while [ $# -gt 0 ]; do
  [ "$1" = "--served-model-name" ] && name="$2"
  shift
done
echo "$name" > /tmp/model
echo "INFO fake engine: loading weights for $name"
echo "INFO fake engine: listening on 8000"
exec /bin/busybox nc -ll -p 8000 -e /bin/handler
