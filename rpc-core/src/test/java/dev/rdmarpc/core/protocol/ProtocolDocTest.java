package dev.rdmarpc.core.protocol;

import dev.rdmarpc.core.Status;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md and the code name the same frame types, frame flags, status codes and HELLO capabilities, with the
 * same values: each table whose first header cell names one of these kinds is read, and every row must be a
 * constant of the code and every constant of the code a row.
 */
class ProtocolDocTest {
    private static final Path DOC = Path.of("..", "docs", "PROTOCOL.md");
    private static List<String> lines;

    @BeforeAll
    static void read() throws IOException {
        assertTrue(Files.isRegularFile(DOC), "the protocol document is at " + DOC.toAbsolutePath());
        lines = Files.readAllLines(DOC);
    }

    /** A table's rows (first cell → the other cells), for the table whose first header cell is {@code firstHeader}. */
    private static Map<String, List<String>> table(String firstHeader) {
        Map<String, List<String>> rows = new LinkedHashMap<>();
        int i = 0;
        while (i < lines.size() && !(isRow(lines.get(i)) && cells(lines.get(i)).getFirst().equals(firstHeader))) {
            i++;
        }
        assertTrue(i < lines.size(), "docs/PROTOCOL.md has a table whose first column is headed '" + firstHeader + "'");
        for (i += 2; i < lines.size() && isRow(lines.get(i)); i++) { // skip the header and the |---| line
            List<String> c = cells(lines.get(i));
            List<String> previous = rows.put(c.getFirst(), c.subList(1, c.size()));
            assertTrue(previous == null, "docs/PROTOCOL.md table '" + firstHeader + "' lists " + c.getFirst() + " twice");
        }
        return rows;
    }

    private static boolean isRow(String line) {
        return line.startsWith("|");
    }

    private static List<String> cells(String row) {
        String inner = row.strip();
        inner = inner.substring(1, inner.endsWith("|") ? inner.length() - 1 : inner.length());
        return Arrays.stream(inner.split("\\|", -1)).map(c -> c.strip().replace("`", "")).toList();
    }

    private static int number(String cell) {
        return cell.startsWith("0x") ? Integer.parseInt(cell.substring(2), 16) : Integer.parseInt(cell);
    }

    /** The public static final int constants of {@code c} whose names pass {@code keep}. */
    private static Map<String, Integer> constants(Class<?> c, java.util.function.Predicate<String> keep) throws IllegalAccessException {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (Field f : c.getDeclaredFields()) {
            int m = f.getModifiers();
            if (Modifier.isPublic(m) && Modifier.isStatic(m) && Modifier.isFinal(m) && f.getType() == int.class && keep.test(f.getName())) {
                out.put(f.getName(), f.getInt(null));
            }
        }
        return out;
    }

    /** Compares a table's names and values (its second column) with the code's constants; returns the differences. */
    private static List<String> compare(String table, Map<String, List<String>> rows, String codeName, Map<String, Integer> code) {
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, Integer> c : code.entrySet()) {
            List<String> row = rows.get(c.getKey());
            if (row == null) {
                problems.add("docs/PROTOCOL.md table '" + table + "' lacks " + codeName + "." + c.getKey() + " (" + c.getValue() + ")");
            } else if (number(row.getFirst()) != c.getValue()) {
                problems.add("docs/PROTOCOL.md table '" + table + "' gives " + c.getKey() + " the value " + row.getFirst()
                        + ", but " + codeName + "." + c.getKey() + " is " + c.getValue());
            }
        }
        for (String name : rows.keySet()) {
            if (!code.containsKey(name)) {
                problems.add("docs/PROTOCOL.md table '" + table + "' names " + name + ", which " + codeName + " does not define");
            }
        }
        return problems;
    }

    private static void assertNoProblems(List<String> problems) {
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    @Test
    void frameTypesMatchFrameType() throws IllegalAccessException {
        assertNoProblems(compare("frame type", table("frame type"), "FrameType", constants(FrameType.class, n -> true)));
    }

    @Test
    void frameFlagsMatchFrameFlagsAndTheTypesThatAllowThem() throws IllegalAccessException {
        Map<String, List<String>> rows = table("flag");
        Map<String, Integer> flags = constants(FrameFlags.class, n -> !n.endsWith("_MASK"));
        List<String> problems = new ArrayList<>(compare("flag", rows, "FrameFlags", flags));
        Map<String, Integer> types = constants(FrameType.class, n -> true);
        Map<Integer, Integer> documentedAllowed = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> row : rows.entrySet()) {
            for (String type : row.getValue().get(1).split(",")) {
                Integer t = types.get(type.strip());
                if (t == null) {
                    problems.add("docs/PROTOCOL.md table 'flag' allows " + row.getKey() + " on " + type.strip() + ", which FrameType does not define");
                } else {
                    documentedAllowed.merge(t, number(row.getValue().getFirst()), (a, b) -> a | b);
                }
            }
        }
        for (Map.Entry<String, Integer> type : types.entrySet()) {
            int documented = documentedAllowed.getOrDefault(type.getValue(), 0);
            int allowed = FrameFlags.allowed(type.getValue());
            if (documented != allowed) {
                problems.add("docs/PROTOCOL.md table 'flag' allows bits 0x" + Integer.toHexString(documented) + " on " + type.getKey()
                        + ", but FrameFlags.allowed(" + type.getKey() + ") is 0x" + Integer.toHexString(allowed));
            }
        }
        assertNoProblems(problems);
    }

    @Test
    void statusCodesMatchStatusCode() {
        Map<String, Integer> codes = new LinkedHashMap<>();
        for (Status.Code c : Status.Code.values()) {
            codes.put(c.name(), c.value());
        }
        assertNoProblems(compare("status code", table("status code"), "Status.Code", codes));
    }

    @Test
    void capabilitiesMatchHello() throws IllegalAccessException {
        assertNoProblems(compare("capability", table("capability"), "Hello", constants(Hello.class, n -> n.startsWith("CAP_"))));
    }
}
