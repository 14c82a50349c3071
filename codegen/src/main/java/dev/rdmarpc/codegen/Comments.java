package dev.rdmarpc.codegen;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.SourceCodeInfo.Location;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The comments of a file's services and methods, from its source code info, as Javadoc-safe lines. */
final class Comments {
    /** Field number of {@code FileDescriptorProto.service}. */
    private static final int FILE_SERVICE = 6;
    /** Field number of {@code ServiceDescriptorProto.method}. */
    private static final int SERVICE_METHOD = 2;

    private final Map<List<Integer>, String> byPath = new HashMap<>();

    Comments(FileDescriptorProto file) {
        for (Location location : file.getSourceCodeInfo().getLocationList()) {
            String text = location.hasLeadingComments() ? location.getLeadingComments() : location.getTrailingComments();
            if (!text.isBlank()) {
                byPath.putIfAbsent(List.copyOf(location.getPathList()), text);
            }
        }
    }

    /** The comment lines of a service, empty when it has none. */
    List<String> service(int serviceIndex) {
        return lines(byPath.get(List.of(FILE_SERVICE, serviceIndex)));
    }

    /** The comment lines of a method of a service, empty when it has none. */
    List<String> method(int serviceIndex, int methodIndex) {
        return lines(byPath.get(List.of(FILE_SERVICE, serviceIndex, SERVICE_METHOD, methodIndex)));
    }

    private static List<String> lines(String comment) {
        List<String> out = new ArrayList<>();
        if (comment == null) {
            return out;
        }
        for (String line : comment.split("\r?\n", -1)) {
            String trimmed = line.stripTrailing();
            if (!trimmed.isEmpty() || !out.isEmpty()) {
                out.add(escapeJavadoc(trimmed));
            }
        }
        while (!out.isEmpty() && out.getLast().isEmpty()) {
            out.removeLast();
        }
        return out;
    }

    /**
     * Escapes text so that it can sit inside a Javadoc {@code <pre>} block: no comment terminator,
     * no Javadoc tag, no HTML markup and no backslash (javac reads unicode escapes even in comments).
     */
    static String escapeJavadoc(String text) {
        StringBuilder out = new StringBuilder(text.length());
        char prev = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '*' -> out.append(prev == '/' ? "&#42;" : "*");
                case '/' -> out.append(prev == '*' ? "&#47;" : "/");
                case '@' -> out.append("&#64;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '&' -> out.append("&amp;");
                case '\\' -> out.append("&#92;");
                default -> out.append(c);
            }
            prev = c;
        }
        return out.toString();
    }
}
