const user = { name: "ana", roles: ["viewer"] };
function requireRole(user, role) {
  if (!user.roles.includes(role)) {
    throw new RangeError(`role ${role} is not one of ${user.roles.join(", ")}`);
  }
}
requireRole(user, "editor");
