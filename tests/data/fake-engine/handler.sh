#!/bin/busybox sh
# One HTTP exchange on stdin/stdout (busybox nc -e): /health, /v1/models, /v1/chat/completions.
read -r method path proto
len=0
while read -r line; do
  line=$(printf '%s' "$line" | tr -d '\r')
  [ -z "$line" ] && break
  case "$line" in [Cc]ontent-[Ll]ength:*) len=$(echo ${line#*:}) ;; esac
done
body=""
[ "$len" -gt 0 ] && body=$(head -c "$len")
model=$(cat /tmp/model)
case "$path" in
  /health) out='{}' ;;
  /v1/models) out="{\"object\":\"list\",\"data\":[{\"id\":\"$model\",\"object\":\"model\"}]}" ;;
  /v1/chat/completions)
    case "$body" in
      *'"tools"'*) out='{"choices":[{"message":{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Beijing\"}"}}]}}]}' ;;
      *) out='{"choices":[{"message":{"role":"assistant","reasoning_content":"17*23 = 391","content":"391"}}]}' ;;
    esac ;;
  *) printf 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'; exit 0 ;;
esac
printf 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %s\r\nConnection: close\r\n\r\n%s' "${#out}" "$out"
