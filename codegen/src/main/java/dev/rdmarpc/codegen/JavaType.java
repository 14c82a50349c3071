package dev.rdmarpc.codegen;

/**
 * A Java class as generated code names it: its package (empty for the unnamed package) and its name inside the
 * package, dotted for a nested class ({@code Outer.Inner}).
 */
record JavaType(String javaPackage, String name) {

    /** The fully qualified name, {@code com.example.Outer.Inner}. */
    String qualified() {
        return JavaNames.join(javaPackage, name);
    }

    /** The first identifier of the qualified name: the one a type or variable in scope could obscure. */
    String firstSegment() {
        String q = qualified();
        int dot = q.indexOf('.');
        return dot < 0 ? q : q.substring(0, dot);
    }

    /** The class's own simple name, the last identifier. */
    String simpleName() {
        return name.substring(name.lastIndexOf('.') + 1);
    }
}
