#!/usr/bin/env bash
# Checks a beast-client wheel the way a user gets it: `auditwheel show`, then an install into a fresh venv
# with no compiler reachable and no index (nothing can be built), then an https:// GET against a local
# server whose certificate comes from a throw-away CA (verify=that CA), an http:// GET, and verify=True
# failing on that untrusted certificate (the system trust store is found and used).
#
#   scripts/check-beast-wheel.sh dist/beast_client-0.1.0-cp311-cp311-manylinux_2_28_x86_64.whl [python]
#
# python: the interpreter for the venv (default python3; e.g. build/cpython/ft/bin/python3.13t for a cp313t wheel).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WHL=$(realpath "$1")
PY=${2:-python3}
T=$(mktemp -d /tmp/beast-wheel-check.XXXXXX)
trap 'kill "${SRV:-}" 2>/dev/null || true; rm -rf "$T"' EXIT

AW=$ROOT/build/wheel/tools/venv/bin/auditwheel
[ -x "$AW" ] && "$AW" show "$WHL"

# a CA and a certificate for localhost / 127.0.0.1 signed by it
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=check-ca \
    -keyout "$T/ca.key" -out "$T/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
    -keyout "$T/srv.key" -out "$T/srv.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$T/ext"
openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 2 \
    -extfile "$T/ext" -out "$T/srv.pem" 2>/dev/null

cat > "$T/server.py" <<'EOF'
import http.server, ssl, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = b"hello\n"
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
d = sys.argv[1]
plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
tls = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(f"{d}/srv.pem", f"{d}/srv.key")
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
open(f"{d}/ports", "w").write(f"{plain.server_address[1]} {tls.server_address[1]}\n")
threading.Thread(target=plain.serve_forever, daemon=True).start()
tls.serve_forever()
EOF
python3 "$T/server.py" "$T" & SRV=$!
for _ in $(seq 50); do [ -s "$T/ports" ] && break; sleep 0.1; done
read -r HTTP_PORT HTTPS_PORT < "$T/ports"

# the install: a fresh venv, no compiler on PATH, CC/CXX pointing at false, no index, binary only
"$PY" -m venv "$T/venv"
env -i HOME="$T" PATH=/nonexistent CC=/bin/false CXX=/bin/false \
    "$T/venv/bin/python" -m pip install -q --no-index --only-binary=:all: --disable-pip-version-check "$WHL"

env -i HOME="$T" PATH=/nonexistent "$T/venv/bin/python" - "$T/ca.pem" "$HTTP_PORT" "$HTTPS_PORT" <<'EOF'
import ssl, sys  # Python's own ssl (the system's libssl) loaded next to the wheel's static OpenSSL
import beast_client
ca, http_port, https_port = sys.argv[1:]
print("beast_client", beast_client.__version__, "from", beast_client.__file__)
c = beast_client.Client(timeout=5, verify=ca)
s = c.get(f"https://localhost:{https_port}/"); print("https verify=ca:", s, c.tls_info); assert s == 200
s = c.get(f"https://127.0.0.1:{https_port}/"); print("https (IP) verify=ca:", s); assert s == 200
s = beast_client.Client(timeout=5).get(f"http://127.0.0.1:{http_port}/"); print("http:", s); assert s == 200
try:
    beast_client.Client(timeout=5).get(f"https://localhost:{https_port}/")
    raise SystemExit("verify=True trusted a throw-away CA")
except beast_client.TLSError as e:
    print("https verify=True (system store) rejects the test CA:", e)
print("OK")
EOF

# SSL_CERT_FILE, when set, replaces the probed bundle for verify=True (OpenSSL's own variable)
env -i HOME="$T" PATH=/nonexistent SSL_CERT_FILE="$T/ca.pem" "$T/venv/bin/python" -c "
import beast_client
s = beast_client.Client(timeout=5).get('https://localhost:$HTTPS_PORT/')
print('https verify=True with SSL_CERT_FILE=ca.pem:', s); assert s == 200"
echo "check passed: $WHL"
