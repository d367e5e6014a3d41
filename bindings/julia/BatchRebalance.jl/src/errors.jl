# Status codes become a Julia exception carrying the code, brs_strerror's
# name for it and the handle's detail message.

"""
    BrsError(code, message)

A libbrs call failed: `code` is the `brs_status` (negative, e.g.
`BatchRebalance.BRS_ERR_OUT_OF_RANGE`), `message` says what to change.
"""
struct BrsError <: Exception
    code::Int32
    message::String
end

function Base.showerror(io::IO, e::BrsError)
    print(io, "BrsError(", e.code, ", ", status_name(e.code), "): ", e.message)
end

"""A copy of a NUL-terminated C string ("" for NULL)."""
c_string(p::Ptr{UInt8}) = p == C_NULL ? "" : unsafe_string(p)

status_name(code::Int32) = c_string(brs_strerror(code))

"""
    check(status, detail)

Throw `BrsError` unless `status` is BRS_OK; `detail()` reads the handle's
message (called only on failure, before any other call on the handle).
"""
function check(status::Int32, detail::Function)
    status == BRS_OK && return nothing
    message = detail()
    throw(BrsError(status, isempty(message) ? status_name(status) : message))
end

check(status::Int32) = check(status, () -> "")

"""The loaded library's version as "MAJOR.MINOR.PATCH"."""
library_version() = c_string(brs_version_string())

"""The loaded library's version as MAJOR * 10000 + MINOR * 100 + PATCH."""
library_version_number() = Int(brs_version_number())

function check_major_version()
    major = library_version_number() ÷ 10000
    major == BRS_MAJOR || error("$(libbrs()) is libbrs $(library_version()); " *
                                "BatchRebalance needs major version $BRS_MAJOR")
    return nothing
end
