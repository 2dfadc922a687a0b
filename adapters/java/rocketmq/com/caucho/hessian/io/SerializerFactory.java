package com.caucho.hessian.io;

/** Stand-in: rmqha sets the controller's tables directly and never serializes them. */
public class SerializerFactory { }
