// Small line icons drawn here rather than fetched: the app's CSP allows no external assets.
import type { ReactNode } from "react";

function Icon({ children, size = 18 }: { children: ReactNode; size?: number }) {
  return (
    <svg
      className="icon"
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.8"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
    >
      {children}
    </svg>
  );
}

type IconProps = { size?: number };

export const WorkflowsIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <circle cx="12" cy="12" r="8.5" />
    <path d="M12 7.5V12l3 2" />
  </Icon>
);

export const ActivityIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M3 12h4l2.5-6.5 5 13L17 12h4" />
  </Icon>
);

export const SessionsIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <rect x="3.5" y="5" width="17" height="14" rx="2" />
    <path d="M7.5 10l2.5 2-2.5 2M12.5 14.5h4" />
  </Icon>
);

export const BellIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M6 16.5V11a6 6 0 0 1 12 0v5.5l1.5 1.5h-15z" />
    <path d="M10 20.5a2.2 2.2 0 0 0 4 0" />
  </Icon>
);

export const FlagIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M5.5 21V4" />
    <path d="M5.5 4.5h12l-2.5 4 2.5 4h-12" />
  </Icon>
);

export const SettingsIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M4 7h9M17 7h3M4 17h3M11 17h9" />
    <circle cx="15" cy="7" r="2" />
    <circle cx="9" cy="17" r="2" />
  </Icon>
);

export const AlertIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M12 3.5 2.5 20h19z" />
    <path d="M12 10v4.5M12 17.2v.1" />
  </Icon>
);

export const CheckIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <circle cx="12" cy="12" r="8.5" />
    <path d="m8.5 12.2 2.4 2.4 4.6-5" />
  </Icon>
);

export const FolderIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M3.5 6.5a1.5 1.5 0 0 1 1.5-1.5h4l2 2.2h8a1.5 1.5 0 0 1 1.5 1.5v8.8a1.5 1.5 0 0 1-1.5 1.5H5a1.5 1.5 0 0 1-1.5-1.5z" />
  </Icon>
);

export const ArrowRightIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M5 12h14M13 6l6 6-6 6" />
  </Icon>
);

export const ArrowLeftIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M19 12H5M11 6l-6 6 6 6" />
  </Icon>
);

export const PlusIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M12 5v14M5 12h14" />
  </Icon>
);

export const SparkleIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M12 3.5 13.8 9l5.7 1.8-5.7 1.8L12 18.5l-1.8-5.9-5.7-1.8L10.2 9z" />
    <path d="M18.5 3.5v3M17 5h3" />
  </Icon>
);

export const PlayIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M7.5 5.5v13l10.5-6.5z" />
  </Icon>
);

export const PauseIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M9 5.5v13M15 5.5v13" />
  </Icon>
);

export const PencilIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M4.5 19.5 5.5 15 15.8 4.7a2 2 0 0 1 2.8 0l.7.7a2 2 0 0 1 0 2.8L9 18.5z" />
    <path d="M13.5 7 17 10.5" />
  </Icon>
);

export const TrashIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M4.5 7h15M10 7V4.5h4V7M6.5 7l1 12.5h9l1-12.5" />
    <path d="M10.5 11v5M13.5 11v5" />
  </Icon>
);

export const ChevronRightIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="m9.5 6 6 6-6 6" />
  </Icon>
);

export const CopyIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <rect x="8.5" y="8.5" width="11" height="11" rx="2" />
    <path d="M15.5 8.5V6.5a2 2 0 0 0-2-2h-7a2 2 0 0 0-2 2v7a2 2 0 0 0 2 2h2" />
  </Icon>
);

export const XIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="m6.5 6.5 11 11M17.5 6.5l-11 11" />
  </Icon>
);

export const HealerNoteIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M3 12h4l2.5-5 4 10 2.5-5h5" />
  </Icon>
);

export const KeyIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <circle cx="8" cy="15" r="3.5" />
    <path d="m10.5 12.5 8-8M16 7l2.5 2.5M13.5 9.5l2 2" />
  </Icon>
);

export const ChipIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <rect x="6.5" y="6.5" width="11" height="11" rx="2" />
    <path d="M10 3.5v3M14 3.5v3M10 17.5v3M14 17.5v3M3.5 10h3M3.5 14h3M17.5 10h3M17.5 14h3" />
  </Icon>
);

export const RefreshIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M19.5 12a7.5 7.5 0 1 1-2.2-5.3" />
    <path d="M19.5 4.5v4h-4" />
  </Icon>
);

export const MemoryIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M12 6.5c-1.6-1.4-3.9-2-7.5-2v13c3.6 0 5.9.6 7.5 2 1.6-1.4 3.9-2 7.5-2v-13c-3.6 0-5.9.6-7.5 2z" />
    <path d="M12 6.5v13" />
  </Icon>
);

export const ShieldIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M12 3.5 5 6.2v5.3c0 4.2 2.9 7.6 7 9 4.1-1.4 7-4.8 7-9V6.2z" />
    <path d="M12 8.5v4M12 15.5v.1" />
  </Icon>
);

/** A branch: what a project's tasks grow on. */
export const ProjectsIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <circle cx="6.5" cy="5.5" r="2" />
    <circle cx="6.5" cy="18.5" r="2" />
    <circle cx="17.5" cy="8.5" r="2" />
    <path d="M6.5 7.5v9" />
    <path d="M17.5 10.5c0 4-6 3.5-10.2 6.6" />
  </Icon>
);

export const StopIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <rect x="6.5" y="6.5" width="11" height="11" rx="1.5" />
  </Icon>
);

export const ArrowUpIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M12 19V5M6 11l6-6 6 6" />
  </Icon>
);

export const ArrowDownIcon = ({ size }: IconProps) => (
  <Icon size={size}>
    <path d="M12 5v14M6 13l6 6 6-6" />
  </Icon>
);
