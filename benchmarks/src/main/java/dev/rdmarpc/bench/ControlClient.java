package dev.rdmarpc.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.OutputStreamWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/** The benchmark client's end of the control connection to a server process. */
final class ControlClient implements AutoCloseable {
    private final String target;
    private final Socket socket;
    private final BufferedReader in;
    private final PrintWriter out;

    private ControlClient(String target, Socket socket) throws IOException {
        this.target = target;
        this.socket = socket;
        this.in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        this.out = new PrintWriter(new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8), true);
    }

    /**
     * Connects to a server process's control port.
     *
     * @throws BenchException when it cannot be reached in time
     */
    static ControlClient connect(String host, int port, Duration connectTimeout, Duration replyTimeout) {
        String target = host + ":" + port;
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(host, port), (int) connectTimeout.toMillis());
            s.setSoTimeout((int) replyTimeout.toMillis());
            return new ControlClient(target, s);
        } catch (IOException e) {
            try {
                s.close();
            } catch (IOException ignored) {
                // nothing more to do
            }
            throw new BenchException(BenchException.FAILED, "cannot reach the benchmark server at " + target + ": "
                    + describe(e) + " (start one there with: rdmarpc-bench server --port " + port + ")");
        }
    }

    private static String describe(IOException e) {
        if (e instanceof SocketTimeoutException) {
            return "no answer (timed out)";
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /** Checks the protocol version and returns the server's facts (pid, cpus, maxMessage, java). */
    Map<String, String> hello() {
        Map<String, String> info = request("HELLO " + ControlProtocol.VERSION);
        if (!String.valueOf(ControlProtocol.VERSION).equals(info.get("version"))) {
            throw new BenchException(BenchException.FAILED, "the server at " + target + " speaks control protocol version "
                    + info.get("version") + ", this client " + ControlProtocol.VERSION + ": use the same rdmarpc-bench build on both");
        }
        return info;
    }

    /** Starts the transport's server and returns its port. */
    int start(Transport t, boolean direct, boolean tls) {
        Map<String, String> r = request("START " + t.cliName() + " " + (direct ? "direct" : "default") + (tls ? " tls" : ""));
        return Integer.parseInt(r.get("port"));
    }

    /** Stops the running transport's server. */
    void stop() {
        request("STOP");
    }

    /** CPU nanoseconds the server process has used so far. */
    long cpuNanos() {
        return Long.parseLong(request("CPU").get("cpu_ns"));
    }

    private synchronized Map<String, String> request(String line) {
        try {
            out.println(line);
            if (out.checkError()) {
                throw new IOException("connection lost");
            }
            String reply = in.readLine();
            if (reply == null) {
                throw new IOException("the server closed the control connection");
            }
            if (reply.startsWith("ERR")) {
                throw new BenchException(BenchException.FAILED, reply.substring(3).trim());
            }
            if (!reply.startsWith("OK")) {
                throw new IOException("unexpected reply '" + reply + "'");
            }
            return ControlProtocol.parseOk(reply);
        } catch (IOException e) {
            throw new BenchException(BenchException.FAILED, "benchmark server at " + target + " failed to answer '"
                    + line.split(" ")[0] + "': " + describe(e), e);
        }
    }

    @Override
    public void close() {
        try {
            out.println("QUIT");
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
