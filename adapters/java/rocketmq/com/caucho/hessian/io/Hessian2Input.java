package com.caucho.hessian.io;

import java.io.InputStream;

/** Stand-in: never used by rmqha (metadata snapshots are set and read field by field). */
public class Hessian2Input {
    public Hessian2Input(InputStream in) { }
    public void setSerializerFactory(SerializerFactory factory) { }
    public Object readObject() { throw new UnsupportedOperationException("hessian stand-in"); }
    public void close() { }
}
