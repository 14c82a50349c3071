#!/usr/bin/env bash
# Makes the test certificates of the TLS tests (run from this folder; needs openssl 3).
# Everything valid is valid for 100 years; expired-server was valid in 2020 only.
#   ca            the trusted test root
#   server        localhost, 127.0.0.1, ::1, signed by ca
#   client        CN=test-client, signed by ca (for mutual TLS)
#   other-client  CN=other-client, signed by ca (a trusted client with another identity)
#   expired-server    as server, valid 2020-01-01 .. 2020-12-31 only
#   wrong-host-server names wrong.example only
#   other-ca / untrusted-server / untrusted-client   a second root, not trusted by the tests, and its leaves
#   forged-server     names ca as its issuer (same subject) but is signed by another key
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
DAYS=36500

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

root() { # name subject
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -subj "$2" -days $DAYS -sha256 -out "$1.pem" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}

leaf() { # name subject san ca-name extendedKeyUsage
  key "$1.key"
  openssl req -new -key "$1.key" -subj "$2" -out "$work/$1.csr"
  printf 'subjectAltName=%s\nextendedKeyUsage=%s\nbasicConstraints=CA:FALSE\n' "$3" "$5" > "$work/$1.ext"
  openssl x509 -req -in "$work/$1.csr" -CA "$4.pem" -CAkey "$4.key" -CAcreateserial -days $DAYS -sha256 \
    -extfile "$work/$1.ext" -out "$1.pem" 2>/dev/null
}

root ca "/CN=rdmarpc test CA"
root other-ca "/CN=rdmarpc other test CA"
leaf server "/CN=localhost" "DNS:localhost,IP:127.0.0.1,IP:::1" ca serverAuth
leaf client "/CN=test-client" "DNS:test-client" ca clientAuth
leaf other-client "/CN=other-client" "DNS:other-client" ca clientAuth
leaf wrong-host-server "/CN=wrong.example" "DNS:wrong.example" ca serverAuth
leaf untrusted-server "/CN=localhost" "DNS:localhost,IP:127.0.0.1,IP:::1" other-ca serverAuth
leaf untrusted-client "/CN=untrusted-client" "DNS:untrusted-client" other-ca clientAuth

# forged-server: an impostor root with ca's exact subject but its own key signs a leaf for localhost.
key "$work/impostor.key"
openssl req -x509 -new -key "$work/impostor.key" -subj "/CN=rdmarpc test CA" -days $DAYS -sha256 -out "$work/impostor.pem" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -addext subjectKeyIdentifier=none
cp "$work/impostor.pem" "$work/impostor-ca.pem"; cp "$work/impostor.key" "$work/impostor-ca.key"
( cd "$work" && key forged.key && openssl req -new -key forged.key -subj "/CN=localhost" -out forged.csr \
  && printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\nauthorityKeyIdentifier=none\n' > forged.ext \
  && openssl x509 -req -in forged.csr -CA impostor-ca.pem -CAkey impostor-ca.key -CAcreateserial -days $DAYS -sha256 \
       -extfile forged.ext -out forged.pem 2>/dev/null )
cp "$work/forged.pem" forged-server.pem; cp "$work/forged.key" forged-server.key

# expired-server: openssl 3.0's x509 cannot set a past window, openssl ca can.
key expired-server.key
openssl req -new -key expired-server.key -subj "/CN=localhost" -out "$work/expired.csr"
mkdir "$work/db"; touch "$work/db/index.txt"; echo 1000 > "$work/db/serial"
cat > "$work/ca.cnf" <<CNF
[ ca ]
default_ca = test_ca
[ test_ca ]
dir = $work/db
database = \$dir/index.txt
new_certs_dir = \$dir
serial = \$dir/serial
default_md = sha256
policy = any
x509_extensions = leaf
[ any ]
commonName = supplied
[ leaf ]
subjectAltName = DNS:localhost,IP:127.0.0.1,IP:::1
extendedKeyUsage = serverAuth
basicConstraints = CA:FALSE
CNF
openssl ca -batch -config "$work/ca.cnf" -cert ca.pem -keyfile ca.key -in "$work/expired.csr" -out "$work/expired.pem" \
  -startdate 20200101000000Z -enddate 20201231000000Z -notext 2>/dev/null
cp "$work/expired.pem" expired-server.pem

rm -f ./*.srl
echo "test certificates written to $(pwd)"
