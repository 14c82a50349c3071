#!/usr/bin/env bash
# Makes the throwaway certificates of rdmarpc-bench --tls (run from this folder; needs openssl 3).
# They are for benchmarking only: the private keys are public. Valid for 100 years.
#   ca       the root both JVMs trust
#   server   CN=localhost, names localhost, 127.0.0.1 and ::1, signed by ca (clients verify it
#            against ca and expect the name "localhost", whatever host they dial)
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
DAYS=36500
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

key ca.key
openssl req -x509 -new -key ca.key -subj "/CN=rdmarpc-bench throwaway CA" -days $DAYS -sha256 -out ca.pem \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
key server.key
openssl req -new -key server.key -subj "/CN=localhost" -out "$work/server.csr"
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' > "$work/server.ext"
openssl x509 -req -in "$work/server.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days $DAYS -sha256 \
  -extfile "$work/server.ext" -out server.pem 2>/dev/null
rm -f ca.srl ca.key
