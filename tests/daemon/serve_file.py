#!/usr/bin/env python3
"""serve_file.py PORT FILE CONTENT-TYPE: serve FILE on 127.0.0.1:PORT for
every GET, with that Content-Type. A stand-in for hwsigd's /metrics so that
a real Prometheus server can scrape a rendered exposition."""
import http.server
import sys

BODY = open(sys.argv[2], 'rb').read()
CTYPE = sys.argv[3]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header('Content-Type', CTYPE)
        self.send_header('Content-Length', str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), Handler).serve_forever()
