package dev.rdmarpc.codegen;

import java.util.List;

/** Accumulates Java source line by line with four-space indentation. */
final class SourceWriter {
    private final StringBuilder out = new StringBuilder(8192);
    private int depth;

    /** Writes one line at the current indentation (an empty string writes a blank line). */
    SourceWriter line(String text) {
        if (!text.isEmpty()) {
            out.repeat("    ", depth).append(text);
        }
        out.append('\n');
        return this;
    }

    /** Writes a blank line. */
    SourceWriter blank() {
        out.append('\n');
        return this;
    }

    /** Writes the line then indents what follows ({@code "... {"}). */
    SourceWriter open(String text) {
        line(text);
        depth++;
        return this;
    }

    /** Outdents, then writes the line ({@code "}"}). */
    SourceWriter close(String text) {
        depth--;
        line(text);
        return this;
    }

    /**
     * Writes a Javadoc comment: the summary, then the proto comment (already escaped) in a
     * {@code <pre>} block when there is one.
     */
    SourceWriter javadoc(String summary, List<String> protoComment) {
        line("/**");
        line(" * " + summary);
        if (!protoComment.isEmpty()) {
            line(" *");
            line(" * <pre>");
            for (String l : protoComment) {
                line(l.isEmpty() ? " *" : " * " + l);
            }
            line(" * </pre>");
        }
        line(" */");
        return this;
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
