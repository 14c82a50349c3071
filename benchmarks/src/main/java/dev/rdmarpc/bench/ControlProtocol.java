package dev.rdmarpc.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The line protocol between the benchmark client and a benchmark server process, over its control
 * port. Requests: {@code HELLO}, {@code START <transport> <direct|default>}, {@code STOP},
 * {@code CPU}, {@code QUIT}. Replies: {@code OK key=value ...} or {@code ERR <message>}.
 */
public final class ControlProtocol {
    /** Protocol version, checked by HELLO. */
    public static final int VERSION = 1;
    /** The line a server process prints on stdout once its control port listens. */
    public static final String READY_PREFIX = "RDMARPC-BENCH-SERVER READY ";

    private ControlProtocol() {
    }

    /** Parses the {@code key=value} words after "OK". */
    public static Map<String, String> parseOk(String line) {
        Map<String, String> m = new LinkedHashMap<>();
        String[] words = line.trim().split("\\s+");
        for (int i = 1; i < words.length; i++) {
            int eq = words[i].indexOf('=');
            if (eq > 0) {
                m.put(words[i].substring(0, eq), words[i].substring(eq + 1));
            }
        }
        return m;
    }

    /** A message made safe for one protocol line. */
    public static String oneLine(String s) {
        return s == null ? "" : s.replace('\r', ' ').replace('\n', ' ');
    }
}
