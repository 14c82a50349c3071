package dev.rdmarpc.bench;

/**
 * A "host:port" address (IPv6 hosts in brackets).
 *
 * @param host host name or address
 * @param port port, 1..65535
 */
record HostPort(String host, int port) {

    /**
     * Parses "host:port".
     *
     * @throws BenchException (bad input) naming what is wrong
     */
    static HostPort parse(String s) {
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            throw new BenchException(BenchException.BAD_INPUT, "--server must be host:port, got '" + s + "'");
        }
        String host = s.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new BenchException(BenchException.BAD_INPUT, "bad port in --server '" + s + "'");
        }
        if (port < 1 || port > 65535) {
            throw new BenchException(BenchException.BAD_INPUT, "port out of range in --server '" + s + "'");
        }
        return new HostPort(host, port);
    }
}
