package com.caucho.hessian.io;

import java.io.OutputStream;

/** Stand-in: never used by rmqha (metadata snapshots are set and read field by field). */
public class Hessian2Output {
    public Hessian2Output(OutputStream out) { }
    public void setSerializerFactory(SerializerFactory factory) { }
    public void writeObject(Object object) { throw new UnsupportedOperationException("hessian stand-in"); }
    public void close() { }
}
